//! What changed between two versions' texts, word by word, for the review screen's "changes
//! since the previous version" view. Unchanged stretches are cut to their ends, so a long
//! document with a few edits shows the edits with a little context, not the whole text.

use std::time::Duration;

use serde::Serialize;
use similar::{Algorithm, ChangeTag, TextDiff};

/// Longest a diff may compute before falling back to a coarser answer.
const DEADLINE: Duration = Duration::from_millis(500);
/// Characters of unchanged text kept on each side of an edit.
const CONTEXT_CHARS: usize = 80;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Same,
    Added,
    Removed,
    /// Unchanged text left out between two edits.
    Skipped,
}

/// One stretch of the comparison.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub kind: ChangeKind,
    pub text: String,
}

/// Unchanged words between two edits, up to this many, are shown as part of one rewritten
/// run rather than splitting it (a sentence rewritten around "the" reads as one change).
const ABSORBED_WORDS: usize = 3;

/// The word-level changes from `old` to `new`, unchanged stretches shortened to their context.
/// Each changed run is one removal followed by one addition (either may be missing), with the
/// spaces inside it kept; empty when the texts are equal.
pub fn word_changes(old: &str, new: &str) -> Vec<Change> {
    if old == new {
        return Vec::new();
    }
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DEADLINE)
        .diff_words(old, new);
    let tokens: Vec<(ChangeKind, &str)> = diff
        .iter_all_changes()
        .map(|change| {
            let kind = match change.tag() {
                ChangeTag::Equal => ChangeKind::Same,
                ChangeTag::Insert => ChangeKind::Added,
                ChangeTag::Delete => ChangeKind::Removed,
            };
            (kind, change.value())
        })
        .collect();
    let merged = runs(&tokens);
    let count = merged.len();
    merged
        .into_iter()
        .enumerate()
        .flat_map(|(index, change)| shorten(change, index == 0, index + 1 == count))
        .collect()
}

/// Groups word tokens into unchanged stretches and changed runs. A run takes in the unchanged
/// tokens between its edits when they are only spaces, or a few words no longer than the edits
/// on either side; each run becomes one removal (its old text) and one addition (its new text).
fn runs(tokens: &[(ChangeKind, &str)]) -> Vec<Change> {
    let mut out: Vec<Change> = Vec::new();
    let mut index = 0;
    while index < tokens.len() {
        let (kind, text) = tokens[index];
        if kind == ChangeKind::Same {
            push(&mut out, ChangeKind::Same, text);
            index += 1;
            continue;
        }
        let (mut removed, mut added) = (String::new(), String::new());
        let mut end = index;
        loop {
            // The edits up to the next unchanged token.
            while end < tokens.len() && tokens[end].0 != ChangeKind::Same {
                match tokens[end].0 {
                    ChangeKind::Removed => removed.push_str(tokens[end].1),
                    _ => added.push_str(tokens[end].1),
                }
                end += 1;
            }
            // The unchanged tokens after them, and whether more edits follow.
            let mut gap_end = end;
            while gap_end < tokens.len() && tokens[gap_end].0 == ChangeKind::Same {
                gap_end += 1;
            }
            if gap_end == end || gap_end == tokens.len() {
                break;
            }
            let gap: String = tokens[end..gap_end].iter().map(|(_, text)| *text).collect();
            let next_edit: usize = tokens[gap_end..]
                .iter()
                .take_while(|(kind, _)| *kind != ChangeKind::Same)
                .map(|(_, text)| text.chars().count())
                .sum();
            let edit_so_far = removed.chars().count().max(added.chars().count());
            let words = gap.split_whitespace().count();
            let absorbed = words == 0
                || (words <= ABSORBED_WORDS && gap.chars().count() <= edit_so_far.min(next_edit));
            if !absorbed {
                break;
            }
            removed.push_str(&gap);
            added.push_str(&gap);
            end = gap_end;
        }
        // Spaces at a run's ends belong to the unchanged text around it.
        let (lead, old_core, new_core, trail) = trim_common_spaces(&removed, &added);
        push(&mut out, ChangeKind::Same, lead);
        push(&mut out, ChangeKind::Removed, old_core);
        push(&mut out, ChangeKind::Added, new_core);
        push(&mut out, ChangeKind::Same, trail);
        index = end;
    }
    out
}

/// Splits off the whitespace both sides of a run start (or end) with: `(leading, old core,
/// new core, trailing)`.
fn trim_common_spaces<'a>(
    removed: &'a str,
    added: &'a str,
) -> (&'a str, &'a str, &'a str, &'a str) {
    let lead = |text: &str| text.len() - text.trim_start().len();
    let trail = |text: &str| text.len() - text.trim_end().len();
    let common = |a: &str, b: &str| {
        a.chars()
            .zip(b.chars())
            .take_while(|(x, y)| x == y && x.is_whitespace())
            .map(|(x, _)| x.len_utf8())
            .sum::<usize>()
    };
    let common_end = |a: &str, b: &str| {
        a.chars()
            .rev()
            .zip(b.chars().rev())
            .take_while(|(x, y)| x == y && x.is_whitespace())
            .map(|(x, _)| x.len_utf8())
            .sum::<usize>()
    };
    // An empty side (a pure addition or removal) shares whatever spaces the other has.
    let (start, end) = match (removed.is_empty(), added.is_empty()) {
        (true, _) | (_, true) => (0, 0),
        _ => (
            common(removed, added).min(lead(removed)),
            common_end(removed, added).min(trail(removed)),
        ),
    };
    let start = start.min(removed.len()).min(added.len());
    let end = end.min(removed.len() - start).min(added.len() - start);
    (
        &removed[..start],
        &removed[start..removed.len() - end],
        &added[start..added.len() - end],
        &removed[removed.len() - end..],
    )
}

/// Appends `text` as `kind`, merged into the last change when it is of the same kind.
fn push(out: &mut Vec<Change>, kind: ChangeKind, text: &str) {
    if text.is_empty() {
        return;
    }
    match out.last_mut() {
        Some(last) if last.kind == kind => last.text.push_str(text),
        _ => out.push(Change {
            kind,
            text: text.to_string(),
        }),
    }
}

/// Cuts an unchanged stretch to the context around the edits next to it.
fn shorten(change: Change, first: bool, last: bool) -> Vec<Change> {
    if change.kind != ChangeKind::Same {
        return vec![change];
    }
    let chars: Vec<char> = change.text.chars().collect();
    let keep_before = if first { 0 } else { CONTEXT_CHARS };
    let keep_after = if last { 0 } else { CONTEXT_CHARS };
    if chars.len() <= keep_before + keep_after + 20 {
        return vec![change];
    }
    let mut parts = Vec::new();
    if keep_before > 0 {
        parts.push(Change {
            kind: ChangeKind::Same,
            text: chars[..keep_before].iter().collect(),
        });
    }
    parts.push(Change {
        kind: ChangeKind::Skipped,
        text: String::new(),
    });
    if keep_after > 0 {
        parts.push(Change {
            kind: ChangeKind::Same,
            text: chars[chars.len() - keep_after..].iter().collect(),
        });
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_texts_have_no_changes() {
        assert!(word_changes("same text", "same text").is_empty());
    }

    #[test]
    fn edits_show_with_context_and_long_stretches_are_skipped() {
        let filler = "word ".repeat(100);
        let old = format!("{filler}The cache holds 64 MiB.{filler}");
        let new = format!("{filler}The cache holds 128 MiB.{filler}");
        let changes = word_changes(&old, &new);
        let kinds: Vec<ChangeKind> = changes.iter().map(|c| c.kind).collect();
        assert_eq!(
            kinds,
            vec![
                ChangeKind::Skipped,
                ChangeKind::Same,
                ChangeKind::Removed,
                ChangeKind::Added,
                ChangeKind::Same,
                ChangeKind::Skipped
            ]
        );
        assert_eq!(changes[2].text, "64");
        assert_eq!(changes[3].text, "128");
        assert!(changes[1].text.ends_with("The cache holds "));
    }

    fn shown(changes: &[Change]) -> Vec<(ChangeKind, &str)> {
        changes.iter().map(|c| (c.kind, c.text.as_str())).collect()
    }

    #[test]
    fn a_changed_run_is_one_removal_and_one_addition_with_its_spaces() {
        let changes = word_changes(
            "use it instead of the old one",
            "use it without the old one",
        );
        assert_eq!(
            shown(&changes),
            vec![
                (ChangeKind::Same, "use it "),
                (ChangeKind::Removed, "instead of"),
                (ChangeKind::Added, "without"),
                (ChangeKind::Same, " the old one"),
            ]
        );
    }

    #[test]
    fn a_rewritten_sentence_is_not_interleaved_word_by_word() {
        let changes = word_changes(
            "Intro. We ship on Monday after the final review. Outro.",
            "Intro. The team ships on Tuesday once the review is done. Outro.",
        );
        let removed: Vec<&str> = changes
            .iter()
            .filter(|c| c.kind == ChangeKind::Removed)
            .map(|c| c.text.as_str())
            .collect();
        let added: Vec<&str> = changes
            .iter()
            .filter(|c| c.kind == ChangeKind::Added)
            .map(|c| c.text.as_str())
            .collect();
        assert_eq!(removed, vec!["We ship on Monday after the final review."]);
        assert_eq!(
            added,
            vec!["The team ships on Tuesday once the review is done."]
        );
    }

    #[test]
    fn pure_additions_and_removals_keep_their_spaces() {
        let changes = word_changes("a b c", "a b x c");
        let text: String = changes
            .iter()
            .filter(|c| c.kind != ChangeKind::Removed)
            .map(|c| c.text.as_str())
            .collect();
        assert_eq!(text, "a b x c");
        let changes = word_changes("a b x c", "a b c");
        let old: String = changes
            .iter()
            .filter(|c| c.kind != ChangeKind::Added)
            .map(|c| c.text.as_str())
            .collect();
        assert_eq!(old, "a b x c");
    }
}
